# A TAIDL v1 spec written for tacit's importer tests: every construct of the v1 syntax that the
# importer maps, in the artifact's own style (f-strings, argparse, module-level constants).
import argparse

from accelerator import Accelerator

parser = argparse.ArgumentParser()
parser.add_argument("--dim", type=int, default=8)
args = parser.parse_args()

DIM = args.dim
ROWS = 64

acc = Accelerator(f"Toy v1 (DIM={DIM})")
acc.add_data_model("sp", f"{ROWS * DIM}", f"{DIM}xs8")
acc.add_data_model("state", "", f"{DIM}x{DIM}xs32")
acc.add_data_model("grid", f"{DIM}x{DIM}", "f32")
acc.add_initial_state("mode", 0)
acc.add_initial_state("ptr", -1)

ins = acc.add_instruction("load", ["n", "addr", "addr_in", "row"])
ins.add_constraints(["@a.n >= 1 and @a.n <= 4", "@a.row + @a.n * @a.n <= " + str(ROWS * DIM)])
ins.add_update(["@s.ptr = @a.row", "@s.mode += 1"])
ins.add_semantics(f"""
%x:`@a.n*@a.n*{DIM}`xs8 <- hbm[@a.addr_in:@a.addr_in+@a.n*@a.n*{DIM}:1];
%y:`@a.n*@a.n`x{DIM}xs8 = reshape(%x);
%y:`@a.n*@a.n`x{DIM}xs8 -> sp[@a.row, 0];
%z:{DIM}xs8 <- hbm[@a.addr];
""")

ins = acc.add_instruction("compute", ["flag", "k", "src", "dst"])
ins.add_constraints(["@s.mode == 1 or @s.mode == 2", "@a.k >= 2 and @a.k % 2 == 0"])
ins.add_update(["@s.mode = 0 if @s.mode == 2 else @s.mode"])
ins.add_semantics(f"""
%a:{DIM}x{DIM}xs8 <- sp[@a.src, 0];
%b:{DIM}x{DIM}xs32 <- state[0, 0];
IF(@a.flag == 1)
{{
    %c:{DIM}x{DIM}xs32 = convert(%a);
    %a:{DIM}x{DIM}xs8 <- sp[@s.ptr, 0];
}}
ELSE
{{
    %c:{DIM}x{DIM}xs32 = constant(-3);
}}
%d:{DIM}x{DIM}xs32 = dot(%c, %b), lhs_batch_dims={{}}, lhs_contracting_dims={{1}}, rhs_batch_dims={{}}, rhs_contracting_dims={{0}};
%d:{DIM}x{DIM}xs32 = clamp(-128, %d, 127);
%e:{DIM}x{DIM}xs8 = convert(%d);
%s:`{DIM}/@a.k`x{DIM}xs8 = slice(%e), slice={{[0:{DIM}:`@a.k`], [0:{DIM}:1]}};
%s:`{DIM}/@a.k`x{DIM}xs8 -> sp[@a.dst, 0];
""")

ins = acc.add_instruction("reduce_rows", ["dst"])
ins.add_semantics(f"""
%g:{DIM}x{DIM}xf32 <- grid[0, 0];
%zero:f32 = constant(0.0);
%sum:{DIM}xf32 = reduce(%g, %zero, {{1}}, add_func_f32);
%sum2:{DIM}x1xf32 = reshape(%sum);
%bc:{DIM}x{DIM}xf32 = broadcast(%sum2);
%h:f32 = constant(float0.5);
%hb:{DIM}x{DIM}xf32 = broadcast(%h);
%m:{DIM}x{DIM}xf32 = select_lt(%g, %bc, %hb, %g);
%row:{DIM}xf32 = broadcast_type(%h);
%col:{DIM}x{DIM}xf32 = broadcast_dim(%row, {{1}});
%n:{DIM}x{DIM}xf32 = add(%m, %col);
%o:{DIM}x{DIM}xf32 = exp(%n);
%o:{DIM}x{DIM}xf32 -> grid[0, 0];
""")

ins = acc.add_instruction("accumulate", ["step", "addr"])
ins.add_semantics(f"""
REPEAT(i, `{DIM}//@a.step`)
{{
    %v:1x{DIM}xs8 <- sp[@a.addr + @l.i, 0];
    %w:1x{DIM}xs8 = copy(%v);
    %w:1x{DIM}xs8 -> sp[@a.addr + @l.i * @a.step, 0];
}}
%t:`{DIM}*4`xs8 <- hbm[@a.addr];
%u:{DIM}x4xs8 = reshape(%t);
%q:`{DIM}`x4xs8 = dynamic_update_slice(%u, %u, s32[] constant(0), s32[] constant(0));
%q:`{DIM}*4`xs8 = reshape(%q);
%q:`{DIM}*4`xs8 -> hbm[@a.addr];
""")

acc.generate_sim("unused")
