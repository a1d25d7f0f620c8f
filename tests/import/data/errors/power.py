from accelerator import Accelerator

acc = Accelerator("Broken")
acc.add_data_model("sp", "16", "16xs8")
ins = acc.add_instruction("f", ["a"])
ins.add_constraints(["@a.a < 2 ** 4"])
