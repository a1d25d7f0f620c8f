from act.taidl import Accelerator
from act.generator import generate_backend

acc = Accelerator("Style")
acc.add_data_model("mem", [16], [4], "u8")
ins = acc.add_instruction("copy_in", [], ["addr", "row"])
ins.set_inputs([["d0", ["@a.addr"], [4]]])
ins.set_outputs([["mem", ["@a.row"], [1]]])
ins.add_semantics("ENTRY copy_in { %r = u8[1,4] reshape(%In1); ROOT %Out0 = u8[1,4] copy(%r); }")
generate_backend(acc)
