"""A TAIDL v2 (ACT API) spec written for tacit's importer tests."""

from act.taidl import Accelerator
from act.generators import generate_oracle, generate_backend

ROWS = 32

toy = Accelerator("Toy v2")
toy.add_data_model("buf", [ROWS], [16], "bf16")
toy.add_data_model("grid", [4, ROWS], [], "s32")

instr = toy.add_instruction("load", ["n"], ["addr_in", "addr_out"], cost="@c.n + 1",
                            constraints=["@c.n >= 1 and @c.n <= 32"])
instr.set_inputs([["d0", ["@a.addr_in"], ["@c.n * 32"]]])
instr.set_outputs([["buf", ["@a.addr_out"], ["@c.n"]]])
instr.add_semantics("""
ENTRY load {
    %In1 = u8[`@c.n * 32`] parameter(0);
    %a = u8[`@c.n`,16,2] reshape(%In1);
    ROOT %Out0 = bf16[`@c.n`,16] bitcast_convert(%a);
}
""")

instr = toy.add_instruction("normalize", ["n"], ["addr"])
instr.set_inputs([["buf", ["@a.addr"], ["@c.n"]]])
instr.set_outputs([["buf", ["@a.addr"], ["@c.n"]]])
instr.add_constraints("@c.n >= 1\n@a.addr + @c.n <= 32")
instr.add_semantics("""
ENTRY normalize {
    %In1 = bf16[`@c.n`,16] parameter(0);
    %e = bf16[`@c.n`,16] exp(%In1);
    %s = bf16[`@c.n`] reduce_add(%e), dimensions={1};
    %b = bf16[`@c.n`,16] broadcast(%s), dimensions={0};
    ROOT %Out0 = bf16[`@c.n`,16] divide(%e, %b);
}
""")

instr = toy.add_instruction("scale", ["rows", "k"], ["src", "dst"], constraints=["@c.k == 4"])
instr.set_inputs([["grid", ["@a.src", 0], ["@c.rows", "@c.k"]], ["grid", [0, "@a.src"], [4, "@c.k"]]])
instr.set_outputs([["grid", ["@a.dst", 0], ["@c.rows", "@c.k"]]])
instr.add_semantics("""
ENTRY scale {
    %In1 = s32[`@c.rows`, `@c.k`] parameter(0);
    %In2 = s32[4, `@c.k`] parameter(1);
    %two = s32[1] constant(2);
    %twos = s32[`@c.rows`,`@c.k`] broadcast(%two), dimensions={};
    %m = s32[`@c.rows`,`@c.k`] multiply(%In1, %twos);
    %t = s32[`@c.k`,4] transpose(%In2), dimensions={1,0};
    %d = s32[`@c.rows`,4] dot(%m, %t);
    %p = s32[`@c.rows`,`@c.k`] slice(%d), slice={[0:`@c.rows`], [0:`@c.k`:1]};
    ROOT %Out0 = s32[`@c.rows`,`@c.k`] maximum(%p, %m);
}
""")

generate_oracle(toy)
generate_backend(toy)
