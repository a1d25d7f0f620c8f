from accelerator import Accelerator

acc = Accelerator("Warn")
acc.add_data_model("sp", "16", "4xs8")
ins = acc.add_instruction("load", ["n", "addr", "row"])
ins.add_semantics("""
%x:`@a.n*4`xs8 <- hbm[@a.addr:@a.addr+@a.n];
%y:`@a.n`x4xs8 = reshape(%x);
%y:`@a.n`x4xs8 -> sp[@a.row, 0];
""")
