from idl.accelerator import Accelerator

acc = Accelerator("Style")
acc.add_data_model("mem", "16", "4xu8")
ins = acc.add_instruction("copy_in", ["addr", "row"])
ins.add_semantics("""
%v:4xs8 <- hbm[@a.addr];
%r:1x4xs8 = reshape(%v);
%u:1x4xu8 = bitcast_convert(%r);
%u:1x4xu8 -> mem[@a.row, 0];
""")
acc.generate_sim()
