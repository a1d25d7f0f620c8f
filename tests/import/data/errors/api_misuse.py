from taidl import Accelerator

acc = Accelerator("Broken")
acc.add_data_model("d1", [8], [8], "s8")
acc.add_macro("m", [])
