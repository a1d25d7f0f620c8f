from accelerator import Accelerator

acc = Accelerator("Broken")
acc.add_data_model("sp", "16", "16xs8")
ins = acc.add_instruction("f", ["a"])
ins.add_semantics("""
%x:1x16xs8 <- sp[@a.a, 0];
%y:1x16xs8 = fancy_op(%x);
%y:1x16xs8 -> sp[@a.a, 0];
""")
