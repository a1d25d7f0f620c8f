from taidl import Accelerator

acc = Accelerator("Broken")
acc.add_data_model("d1", [8], [8], "s8")
ins = acc.add_instruction("mov", ["n"], ["addr"])
ins.set_inputs([["d1", ["@a.addr"], ["@c.n"]]])
ins.set_outputs([["d1", ["@a.addr"], ["@c.n"]]])
ins.add_semantics("""
ENTRY mov {
    %In1 = s8[`@c.n`,8] parameter(0);
    %a = s8[`@c.n`,8] select_eq_var(%In1, %In1);
    ROOT %Out0 = s8[`@c.n`,8] copy(%a);
}
""")
