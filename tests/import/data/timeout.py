from accelerator import Accelerator

acc = Accelerator("Slow")
while True:
    pass
