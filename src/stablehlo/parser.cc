#include "stablehlo/parser.h"

#include <cerrno>
#include <cstdlib>

#include "stablehlo/parser_impl.h"

namespace tacit::stablehlo {

const Attr* Attr::find(std::string_view name) const {
  for (const auto& [key, value] : dict)
    if (key == name) return &value;
  return nullptr;
}

const Attr* NamedAttrs::find(std::string_view name) const {
  for (const auto& [key, value] : entries)
    if (key == name) return &value;
  return nullptr;
}

void NamedAttrs::set(std::string name, Attr value) {
  for (auto& [key, old] : entries) {
    if (key == name) {
      old = std::move(value);
      return;
    }
  }
  entries.push_back({std::move(name), std::move(value)});
}

Parser::DepthGuard::DepthGuard(Parser& parser, size_t offset) : p(parser) {
  if (++p.depth_ > kMaxNestingDepth) {
    p.lex_.fail(offset, "nesting deeper than " + std::to_string(kMaxNestingDepth) + " levels",
                "tacit limits nesting to keep hostile input from exhausting the stack");
  }
}

void Parser::countValues(int64_t n, const SourceLoc& loc) {
  values_ += n;
  if (values_ > kMaxValues) {
    fail(lex_.file().name(), loc, "more than " + std::to_string(kMaxValues) + " values in a module",
         "tacit limits the size of a module (docs/stablehlo.md)");
  }
}

// ---- tokens ----

void Parser::failExpected(std::string_view what, std::string hint) {
  Token t = lex_.peek();
  std::string got = std::string(tokName(t.kind));
  if (t.is(Tok::kIdent) || t.is(Tok::kValue) || t.is(Tok::kSymbol)) got += " '" + t.text + "'";
  failAt(t, "expected " + std::string(what) + ", got " + got, std::move(hint));
}

Token Parser::expect(Tok kind, std::string_view what) {
  if (!lex_.peek().is(kind)) failExpected(what);
  return lex_.next();
}

void Parser::expectIdent(std::string_view word, std::string_view context) {
  if (!lex_.peek().isIdent(word))
    failExpected("'" + std::string(word) + "' " + std::string(context));
  lex_.next();
}

bool Parser::accept(Tok kind) {
  if (!lex_.peek().is(kind)) return false;
  lex_.next();
  return true;
}

bool Parser::acceptIdent(std::string_view word) {
  if (!lex_.peek().isIdent(word)) return false;
  lex_.next();
  return true;
}

int64_t Parser::parseInt(std::string_view what) {
  Token t = lex_.peek();
  if (!t.is(Tok::kInt)) failExpected(what);
  lex_.next();
  errno = 0;
  char* end = nullptr;
  bool hex = t.text.find("0x") != std::string::npos;
  long long v = std::strtoll(t.text.c_str(), &end, hex ? 16 : 10);
  if (errno == ERANGE) failAt(t, "integer " + t.text + " does not fit in 64 bits");
  return v;
}

std::vector<int64_t> Parser::parseIntList() {
  DepthGuard guard(*this, lex_.skipBlanks());
  expect(Tok::kLSquare, "'[' starting a list of integers");
  std::vector<int64_t> out;
  if (accept(Tok::kRSquare)) return out;
  do {
    out.push_back(parseInt("an integer"));
  } while (accept(Tok::kComma));
  expect(Tok::kRSquare, "',' or ']'");
  return out;
}

BlockArg Parser::parseTypedArg(std::string_view what, bool attrs) {
  BlockArg arg;
  Token name = expect(Tok::kValue, what);
  arg.name = name.text;
  arg.loc = locOf(name.begin);
  expect(Tok::kColon, "':' and the argument's type");
  arg.type = parseType();
  if (attrs) parseOptionalAttrDict(arg.attrs);
  arg.loc_name = parseOptionalLoc();
  return arg;
}

std::string Parser::parseOptionalLoc() {
  if (!lex_.peek().isIdent("loc")) return {};
  lex_.next();
  Token open = expect(Tok::kLParen, "'(' after 'loc'");
  std::string name;
  Token first = lex_.peek();
  if (first.is(Tok::kString)) name = first.text;
  if (first.is(Tok::kHash)) name = "#" + first.text;
  // Skip the rest, balanced: call sites, fused locations, file:line:col.
  int depth = 1;
  while (depth > 0) {
    Token t = lex_.next();
    if (t.is(Tok::kEof)) failAt(open, "unterminated 'loc('", "close it with ')'");
    if (t.is(Tok::kLParen) || t.is(Tok::kLSquare) || t.is(Tok::kLBrace)) {
      if (++depth > kMaxNestingDepth) failAt(t, "nesting deeper than 100 levels");
    }
    if (t.is(Tok::kRParen) || t.is(Tok::kRSquare) || t.is(Tok::kRBrace)) --depth;
  }
  return name;
}

// ---- ops and regions ----

ValueRef Parser::parseValueRef() {
  Token t = expect(Tok::kValue, "a value (%name)");
  return ValueRef{t.text, t.result, locOf(t.begin)};
}

std::vector<ValueRef> Parser::parseValueRefList() {
  std::vector<ValueRef> out;
  if (!lex_.peek().is(Tok::kValue)) return out;
  while (true) {
    out.push_back(parseValueRef());
    // `%a, %b` continues the list; `%a, dims = ...` ends it before the ','.
    const size_t before_comma = lex_.offset();
    if (!accept(Tok::kComma)) break;
    if (!lex_.peek().is(Tok::kValue)) {
      lex_.seek(before_comma);
      break;
    }
  }
  return out;
}

// `{ [^bb0(%a: T, ...):] op* }`: one block (tacit's HLO has no control flow inside a region).
void Parser::parseRegionBody(Region& region, bool allow_label) {
  DepthGuard guard(*this, lex_.skipBlanks());
  Token open = expect(Tok::kLBrace, "'{' starting a region");
  region.loc = locOf(open.begin);
  if (allow_label && lex_.peek().is(Tok::kBlock)) {
    lex_.next();
    if (accept(Tok::kLParen) && !accept(Tok::kRParen)) {
      do {
        region.args.push_back(parseTypedArg("a block argument (%name: type)", false));
        countValues(1, region.loc);
      } while (accept(Tok::kComma));
      expect(Tok::kRParen, "',' or ')' after the block arguments");
    }
    expect(Tok::kColon, "':' after the block label");
  }
  while (!lex_.peek().is(Tok::kRBrace)) {
    Token t = lex_.peek();
    if (t.is(Tok::kEof)) failAt(open, "unterminated region", "close it with '}'");
    if (t.is(Tok::kBlock))
      failAt(t, "regions with several blocks are not supported", "tacit's HLO has no branches");
    region.ops.push_back(parseOp());
  }
  lex_.next();
}

Op Parser::parseOp() {
  Op op;
  Token first = lex_.peek();
  op.loc = locOf(first.begin);
  if (first.is(Tok::kValue)) {
    do {
      Token r = expect(Tok::kValue, "a result name");
      if (r.result >= 0) failAt(r, "a result name cannot have '#N'", "write %name or %name:N");
      int64_t count = 1;
      if (accept(Tok::kColon)) {
        count = parseInt("the number of results after ':'");
        if (count < 1 || count > kMaxResults)
          failAt(r, "an op has 1 to " + std::to_string(kMaxResults) + " results");
      }
      for (int64_t i = 0; i < count; ++i)
        op.results.push_back(count == 1 ? r.text : r.text + "#" + std::to_string(i));
      op.result_count += count;
    } while (accept(Tok::kComma));
    expect(Tok::kEqual, "'=' after the result names");
    countValues(op.result_count, op.loc);
  }
  Token name = lex_.peek();
  if (name.is(Tok::kString)) {
    lex_.next();
    op.name = name.text;
    op.loc = locOf(name.begin);
    parseGenericOp(op);
  } else if (name.is(Tok::kIdent)) {
    lex_.next();
    op.name = name.text;
    op.loc = locOf(name.begin);
    parsePrettyOp(op);
  } else {
    failExpected("an operation (stablehlo.add ..., \"stablehlo.add\"(...), return ...)");
  }
  op.loc_name = parseOptionalLoc();
  return op;
}

void checkCounts(const SourceFile& file, const Op& op) {
  if (op.operand_types.size() != op.operands.size()) {
    fail(file.name(), op.loc,
         "'" + op.name + "' has " + std::to_string(op.operands.size()) + " operands but " +
             std::to_string(op.operand_types.size()) + " operand types");
  }
  if (op.result_count != 0 && static_cast<int64_t>(op.result_types.size()) != op.result_count) {
    fail(file.name(), op.loc,
         "'" + op.name + "' defines " + std::to_string(op.result_count) + " results but has " +
             std::to_string(op.result_types.size()) + " result types");
  }
}

void Parser::parseGenericOp(Op& op) {
  expect(Tok::kLParen, "'(' and the operands of \"" + op.name + "\"");
  op.operands = parseValueRefList();
  expect(Tok::kRParen, "',' or ')' after the operands");
  if (lex_.peek().is(Tok::kLSquare))
    failExpected("no successors", "tacit's HLO has no branches between blocks");
  if (accept(Tok::kLess)) {  // properties: <{...}>
    parseAttrDict(op.attrs);
    expect(Tok::kGreater, "'>' closing the properties");
  }
  if (accept(Tok::kLParen)) {
    do {
      Region region;
      parseRegionBody(region, /*allow_label=*/true);
      op.regions.push_back(std::move(region));
    } while (accept(Tok::kComma));
    expect(Tok::kRParen, "',' or ')' after the regions");
  }
  parseOptionalAttrDict(op.attrs);
  expect(Tok::kColon, "':' and the function type of \"" + op.name + "\"");
  parseFunctionType(op.operand_types, op.result_types);
  checkCounts(lex_.file(), op);
}

// ---- functions and modules ----

Func Parser::parseFunc(SourceLoc loc) {
  Func f;
  f.loc = loc;
  Token t = lex_.peek();
  if (t.isIdent("public") || t.isIdent("private") || t.isIdent("nested")) {
    f.visibility = t.text;
    lex_.next();
  }
  f.name = expect(Tok::kSymbol, "the function's name (@main)").text;
  expect(Tok::kLParen, "'(' and the function's arguments");
  if (!accept(Tok::kRParen)) {
    do {
      f.body.args.push_back(parseTypedArg("an argument (%arg0: tensor<...>)", true));
      countValues(1, loc);
    } while (accept(Tok::kComma));
    expect(Tok::kRParen, "',' or ')' after the arguments");
  }
  if (accept(Tok::kArrow)) {
    // Result attributes only inside parentheses: after `-> T`, a '{' opens the body.
    auto result = [this, &f](bool with_attrs) {
      f.result_types.push_back(parseType());
      NamedAttrs attrs;
      if (with_attrs) parseOptionalAttrDict(attrs);
      f.result_attrs.push_back(std::move(attrs));
    };
    if (accept(Tok::kLParen)) {
      if (!accept(Tok::kRParen)) {
        do {
          result(true);
        } while (accept(Tok::kComma));
        expect(Tok::kRParen, "',' or ')' after the result types");
      }
    } else {
      result(false);
    }
  }
  if (acceptIdent("attributes")) {
    NamedAttrs ignored;  // jax attributes of the function: no meaning in HLO
    parseAttrDict(ignored);
  }
  if (!lex_.peek().is(Tok::kLBrace)) {
    failExpected("'{' and the function's body",
                 "function declarations without a body are not supported");
  }
  Region body;
  parseRegionBody(body, /*allow_label=*/false);
  f.body.ops = std::move(body.ops);
  f.body.loc = body.loc;
  parseOptionalLoc();
  return f;
}

Func Parser::funcFromGeneric(Op& op) {
  Func f;
  f.loc = op.loc;
  const Attr* name = op.attrs.find("sym_name");
  const Attr* type = op.attrs.find("function_type");
  if (!name || name->kind != Attr::Kind::kString)
    fail(lex_.file().name(), op.loc, "\"func.func\" needs sym_name = \"...\"");
  if (!type || type->kind != Attr::Kind::kType || type->list.size() != 2)
    fail(lex_.file().name(), op.loc, "\"func.func\" needs function_type = (...) -> ...");
  if (op.regions.size() != 1)
    fail(lex_.file().name(), op.loc, "\"func.func\" needs one region, its body");
  f.name = name->text;
  if (const Attr* v = op.attrs.find("sym_visibility"); v && v->kind == Attr::Kind::kString)
    f.visibility = v->text;
  f.body = std::move(op.regions[0]);
  const std::vector<Attr>& inputs = type->list[0].list;
  if (inputs.size() != f.body.args.size()) {
    fail(lex_.file().name(), op.loc,
         "the function type has " + std::to_string(inputs.size()) + " inputs but the body " +
             std::to_string(f.body.args.size()) + " arguments");
  }
  const Attr* arg_attrs = op.attrs.find("arg_attrs");
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (arg_attrs && arg_attrs->kind == Attr::Kind::kList && i < arg_attrs->list.size())
      f.body.args[i].attrs.entries = arg_attrs->list[i].dict;
  }
  const Attr* res_attrs = op.attrs.find("res_attrs");
  for (size_t i = 0; i < type->list[1].list.size(); ++i) {
    f.result_types.push_back(type->list[1].list[i].type);
    NamedAttrs attrs;
    if (res_attrs && res_attrs->kind == Attr::Kind::kList && i < res_attrs->list.size())
      attrs.entries = res_attrs->list[i].dict;
    f.result_attrs.push_back(std::move(attrs));
  }
  return f;
}

void Parser::parseModuleBody(Module& m) {
  while (true) {
    Token t = lex_.peek();
    if (t.is(Tok::kRBrace) || t.is(Tok::kEof)) return;
    if (t.isIdent("func.func")) {
      lex_.next();
      m.funcs.push_back(parseFunc(locOf(t.begin)));
      continue;
    }
    if (t.is(Tok::kString) && t.text == "func.func") {
      Op op = parseOp();
      m.funcs.push_back(funcFromGeneric(op));
      continue;
    }
    if (t.is(Tok::kIdent) || t.is(Tok::kString)) {
      failAt(t, "'" + t.text + "' is not supported at module level",
             "a module holds func.func definitions (Shardy meshes and other dialects are left "
             "out)");
    }
    failExpected("func.func or '}'");
  }
}

Module Parser::parseFile() {
  Module m;
  bool have_module = false;
  while (true) {
    Token t = lex_.peek();
    if (t.is(Tok::kEof)) break;
    if (t.is(Tok::kHash) || t.is(Tok::kBang)) {
      // An alias definition: `#loc3 = loc("x")`, `#map = affine_map<...>`, `!t = type`.
      lex_.next();
      expect(Tok::kEqual, "'=' in an alias definition");
      if (t.is(Tok::kBang)) {
        parseType();
      } else if (lex_.peek().isIdent("loc")) {
        std::string name = parseOptionalLoc();
        if (!name.empty()) loc_aliases_["#" + t.text] = name;
      } else {
        parseAttr();
      }
      continue;
    }
    if (have_module) failAt(t, "a file holds one module", "split modules with a `// -----` line");
    have_module = true;
    m.loc = locOf(t.begin);
    if (t.isIdent("module")) {
      lex_.next();
      if (lex_.peek().is(Tok::kSymbol)) m.name = lex_.next().text;
      if (acceptIdent("attributes")) parseAttrDict(m.attrs);
      Token open = expect(Tok::kLBrace, "'{' starting the module's body");
      DepthGuard guard(*this, open.begin);
      parseModuleBody(m);
      expect(Tok::kRBrace, "'}' closing the module");
      parseOptionalLoc();
    } else if (t.is(Tok::kString) && t.text == "builtin.module") {
      lex_.next();
      expect(Tok::kLParen, "'(' after \"builtin.module\"");
      expect(Tok::kRParen, "')': a module has no operands");
      if (accept(Tok::kLess)) {
        NamedAttrs props;
        parseAttrDict(props);
        expect(Tok::kGreater, "'>' closing the properties");
        if (const Attr* n = props.find("sym_name"); n && n->kind == Attr::Kind::kString)
          m.name = n->text;
      }
      expect(Tok::kLParen, "'(' and the module's region");
      Token open = expect(Tok::kLBrace, "'{' starting the module's region");
      {
        DepthGuard guard(*this, open.begin);
        parseModuleBody(m);
      }
      expect(Tok::kRBrace, "'}' closing the module's region");
      expect(Tok::kRParen, "')' after the module's region");
      parseOptionalAttrDict(m.attrs);
      if (const Attr* n = m.attrs.find("sym_name"); n && n->kind == Attr::Kind::kString)
        m.name = n->text;
      expect(Tok::kColon, "': () -> ()' after the module");
      std::vector<Type> in, out;
      parseFunctionType(in, out);
      parseOptionalLoc();
    } else if (t.isIdent("func.func") || (t.is(Tok::kString) && t.text == "func.func")) {
      parseModuleBody(m);  // functions without a module around them
      if (lex_.peek().is(Tok::kRBrace)) failExpected("the end of the file");
    } else {
      failExpected("'module', 'func.func' or \"builtin.module\"",
                   "StableHLO text starts with `module @name {` (as JAX prints it)");
    }
  }
  if (!have_module)
    fail(lex_.file().name(), {}, "the file holds no module",
         "write module @name { func.func public @main(...) ... }");
  // Name locations given through aliases (JAX prints them after the module).
  auto resolve = [this](std::string& name) {
    for (int hops = 0; hops < 8 && !name.empty() && name[0] == '#'; ++hops) {
      auto it = loc_aliases_.find(name);
      name = it == loc_aliases_.end() ? std::string() : it->second;
    }
  };
  auto resolveRegion = [&resolve](auto&& self, Region& r) -> void {
    for (BlockArg& a : r.args)
      resolve(a.loc_name);
    for (Op& op : r.ops) {
      resolve(op.loc_name);
      for (Region& inner : op.regions)
        self(self, inner);
    }
  };
  for (Func& f : m.funcs)
    resolveRegion(resolveRegion, f.body);
  return m;
}

Module parseSyntax(const SourceFile& file) {
  Parser parser(file);
  return parser.parseFile();
}

}  // namespace tacit::stablehlo
