# The pattern of the artifact's Gemmini bias_load ELSE branch: a value converted into itself.
from accelerator import Accelerator

acc = Accelerator("Broken")
acc.add_data_model("bias", "4x4", "s32")
ins = acc.add_instruction("bias_load", ["hbm_addr", "is_full_width"])
ins.add_semantics("""
IF(@a.is_full_width == 1)
{
    %In:64xs8 <- hbm[@a.hbm_addr];
    %Out.8:4x4x4xs8 = reshape(%In);
    %Out.32:4x4xs32 = bitcast_convert(%Out.8);
}
ELSE
{
    %In:16xs8 <- hbm[@a.hbm_addr];
    %Out.8:4x4xs8 = reshape(%In);
    %Out.32:4x4xs8 = convert(%Out.32);
}
%Out.32:4x4xs32 -> bias[0,0];
""")
