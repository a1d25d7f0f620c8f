# v1 import style of the artifact's specs: the idl package found through sys.path and importlib.
import importlib
import os
import sys

repo_dir = os.path.dirname(os.path.abspath(__file__))
sys.path.append(os.path.dirname(repo_dir))

_accelerator = importlib.import_module("idl.accelerator")
Accelerator = _accelerator.Accelerator

acc = Accelerator("Style")
acc.add_data_model("mem", "16", "4xu8")
ins = acc.add_instruction("copy_in", ["addr", "row"])
ins.add_semantics("""
%v:4xs8 <- hbm[@a.addr];
%r:1x4xs8 = reshape(%v);
%u:1x4xu8 = bitcast_convert(%r);
%u:1x4xu8 -> mem[@a.row, 0];
""")
acc.generate_api("sim")
