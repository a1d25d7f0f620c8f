import sys
from accelerator import Accelerator

acc = Accelerator("Broken")
sys.exit(3)
