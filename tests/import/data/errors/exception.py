from accelerator import Accelerator

SIZES = {"small": 16}

acc = Accelerator("Broken")
acc.add_data_model("sp", str(SIZES["large"]), "16xs8")
