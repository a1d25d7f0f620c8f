#include "stablehlo/window.h"

#include <algorithm>

#include "stablehlo/dense.h"
#include "support/strings.h"

namespace tacit::stablehlo {
namespace {

struct Reader {
  const SourceFile& file;
  const Op& op;

  [[noreturn]] void bad(SourceLoc loc, const std::string& message, std::string hint = {}) const {
    fail(file.name(), loc.known() ? loc : op.loc, "'" + op.name + "': " + message, std::move(hint));
  }

  // A list of integers in any of its spellings: [1, 2], array<i64: 1, 2>, array<i1: true>,
  // [true, false], dense<[[0, 1], [1, 0]]> : tensor<2x2xi64> (flattened), [[0, 1], [1, 0]].
  std::vector<int64_t> ints(const Attr& a) const {
    if (a.kind == Attr::Kind::kIntArray) return a.ints;
    if (a.kind == Attr::Kind::kDense && (hlo::isInteger(a.type.shape.elementType()) ||
                                         a.type.shape.elementType() == hlo::PrimitiveType::kPred)) {
      hlo::Literal l = denseLiteral(file, a);
      std::vector<int64_t> out;
      for (int64_t i = 0; i < l.elementCount(); ++i)
        out.push_back(l.getInt64(i));
      return out;
    }
    if (a.kind == Attr::Kind::kList) {
      std::vector<int64_t> out;
      for (const Attr& e : a.list) {
        if (e.kind == Attr::Kind::kBool) {
          out.push_back(e.b ? 1 : 0);
        } else if (e.kind == Attr::Kind::kIntArray) {
          out.insert(out.end(), e.ints.begin(), e.ints.end());
        } else {
          bad(e.loc, "expected integers, booleans or lists of integers");
        }
      }
      return out;
    }
    bad(a.loc, "expected a list of integers");
  }

  // `name` as `count` integers, or `fallback` repeated when absent.
  std::vector<int64_t> field(std::string_view name, size_t count, int64_t fallback) const {
    const Attr* a = op.attrs.find(name);
    if (!a) return std::vector<int64_t>(count, fallback);
    std::vector<int64_t> v = ints(*a);
    if (v.size() != count) {
      bad(a->loc, std::string(name) + " has " + std::to_string(v.size()) + " values; the " +
                      std::to_string(count) + " expected follow the spatial dimensions");
    }
    return v;
  }

  hlo::ConvDims dims(const Attr& a) const {
    hlo::ConvDims d;
    if (a.find("input_batch_dimension")) {  // the raw form: positions by name
      auto one = [&](const char* key) {
        const Attr* v = a.find(key);
        if (!v || v->kind != Attr::Kind::kInt)
          bad(a.loc, std::string("#stablehlo.conv needs ") + key);
        return v->i;
      };
      auto list = [&](const char* key) {
        const Attr* v = a.find(key);
        if (!v || v->kind != Attr::Kind::kIntArray)
          bad(a.loc, std::string("#stablehlo.conv needs ") + key);
        return v->ints;
      };
      d.input_batch = one("input_batch_dimension");
      d.input_feature = one("input_feature_dimension");
      d.input_spatial = list("input_spatial_dimensions");
      d.kernel_input_feature = one("kernel_input_feature_dimension");
      d.kernel_output_feature = one("kernel_output_feature_dimension");
      d.kernel_spatial = list("kernel_spatial_dimensions");
      d.output_batch = one("output_batch_dimension");
      d.output_feature = one("output_feature_dimension");
      d.output_spatial = list("output_spatial_dimensions");
      // Positions index the operands' dimensions (shape inference reads them unchecked): each
      // part's positions are 0..rank-1 once each.
      auto check = [&](int64_t x, int64_t y, const std::vector<int64_t>& spatial,
                       const char* part) {
        std::vector<int64_t> all = spatial;
        all.push_back(x);
        all.push_back(y);
        std::sort(all.begin(), all.end());
        for (size_t i = 0; i < all.size(); ++i) {
          if (all[i] != static_cast<int64_t>(i)) {
            bad(a.loc, std::string("the ") + part +
                           " dimension numbers are not a permutation of 0.." +
                           std::to_string(all.size() - 1));
          }
        }
      };
      check(d.input_batch, d.input_feature, d.input_spatial, "input");
      check(d.kernel_input_feature, d.kernel_output_feature, d.kernel_spatial, "kernel");
      check(d.output_batch, d.output_feature, d.output_spatial, "output");
      if (d.kernel_spatial.size() != d.input_spatial.size() ||
          d.output_spatial.size() != d.input_spatial.size())
        bad(a.loc, "the input, kernel and output have different numbers of spatial dimensions");
      return d;
    }
    // Label lists: each position names a dimension (b/f, i/o, or a spatial number).
    auto labels = [&](const char* part, char first, char second, int64_t& a_pos, int64_t& b_pos,
                      std::vector<int64_t>& spatial) {
      const Attr* list = a.find(part);
      if (!list || list->kind != Attr::Kind::kList) bad(a.loc, "malformed dimension numbers");
      a_pos = b_pos = -1;
      const int64_t n = static_cast<int64_t>(list->list.size()) - 2;
      if (n < 0) bad(list->loc, "a convolution operand has at least 2 dimensions");
      spatial.assign(static_cast<size_t>(n), -1);
      for (int64_t pos = 0; pos < static_cast<int64_t>(list->list.size()); ++pos) {
        const Attr& l = list->list[static_cast<size_t>(pos)];
        int64_t* slot = nullptr;
        if (l.text.size() == 1 && l.text[0] == first) {
          slot = &a_pos;
        } else if (l.text.size() == 1 && l.text[0] == second) {
          slot = &b_pos;
        } else if (!l.text.empty() && l.text.size() < 4 &&
                   std::all_of(l.text.begin(), l.text.end(),
                               [](char c) { return c >= '0' && c <= '9'; })) {
          const int64_t k = std::stoll(l.text);
          if (k < n) slot = &spatial[static_cast<size_t>(k)];
        }
        if (!slot || *slot != -1) {
          bad(l.loc, "bad or repeated dimension label '" + l.text + "'",
              std::string("each of ") + first + ", " + second + " and 0.." + std::to_string(n - 1) +
                  " appears once");
        }
        *slot = pos;
      }
    };
    labels("lhs", 'b', 'f', d.input_batch, d.input_feature, d.input_spatial);
    labels("rhs", 'i', 'o', d.kernel_input_feature, d.kernel_output_feature, d.kernel_spatial);
    labels("out", 'b', 'f', d.output_batch, d.output_feature, d.output_spatial);
    if (d.kernel_spatial.size() != d.input_spatial.size() ||
        d.output_spatial.size() != d.input_spatial.size())
      bad(a.loc, "the input, kernel and output have different numbers of spatial dimensions");
    return d;
  }
};

}  // namespace

hlo::HloAttributes convolutionAttributes(const SourceFile& file, const Op& op,
                                         const hlo::Shape& kernel) {
  Reader r{file, op};
  const Attr* numbers = op.attrs.find("dimension_numbers");
  if (!numbers || numbers->kind != Attr::Kind::kDict)
    r.bad(op.loc, "needs dimension numbers",
          "dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]");
  hlo::HloAttributes attrs;
  attrs.conv_dims = r.dims(*numbers);
  const hlo::ConvDims& d = *attrs.conv_dims;
  const size_t n = d.input_spatial.size();
  if (!kernel.isArray() || kernel.rank() != static_cast<int64_t>(n) + 2)
    r.bad(op.loc, "the kernel's rank does not match the dimension numbers");
  const std::vector<int64_t> strides = r.field("window_strides", n, 1);
  const std::vector<int64_t> padding = r.field("padding", 2 * n, 0);
  const std::vector<int64_t> lhs_dilation = r.field("lhs_dilation", n, 1);
  const std::vector<int64_t> rhs_dilation = r.field("rhs_dilation", n, 1);
  const std::vector<int64_t> reversal = r.field("window_reversal", n, 0);
  std::vector<hlo::WindowDim> window(n);
  for (size_t k = 0; k < n; ++k) {
    hlo::WindowDim& w = window[k];
    w.size = kernel.dim(d.kernel_spatial[k]);
    w.stride = strides[k];
    w.pad_lo = padding[2 * k];
    w.pad_hi = padding[2 * k + 1];
    w.lhs_dilation = lhs_dilation[k];
    w.rhs_dilation = rhs_dilation[k];
    w.reversal = reversal[k] != 0;
  }
  attrs.window = std::move(window);
  // HLO writes a group count only when it is not 1.
  for (const auto& [name, slot] : {std::pair{"feature_group_count", &attrs.feature_group_count},
                                   std::pair{"batch_group_count", &attrs.batch_group_count}}) {
    if (const Attr* c = op.attrs.find(name)) {
      if (c->kind != Attr::Kind::kInt) r.bad(c->loc, std::string(name) + " must be an integer");
      if (c->i != 1) *slot = c->i;
    }
  }
  return attrs;
}

std::vector<hlo::WindowDim> reduceWindowWindow(const SourceFile& file, const Op& op, int64_t rank) {
  Reader r{file, op};
  const size_t n = static_cast<size_t>(std::max<int64_t>(rank, 0));
  if (!op.attrs.find("window_dimensions")) r.bad(op.loc, "needs window_dimensions");
  const std::vector<int64_t> sizes = r.field("window_dimensions", n, 1);
  const std::vector<int64_t> strides = r.field("window_strides", n, 1);
  const std::vector<int64_t> base = r.field("base_dilations", n, 1);
  const std::vector<int64_t> dilations = r.field("window_dilations", n, 1);
  const std::vector<int64_t> padding = r.field("padding", 2 * n, 0);
  std::vector<hlo::WindowDim> window(n);
  for (size_t k = 0; k < n; ++k) {
    window[k].size = sizes[k];
    window[k].stride = strides[k];
    window[k].lhs_dilation = base[k];
    window[k].rhs_dilation = dilations[k];
    window[k].pad_lo = padding[2 * k];
    window[k].pad_hi = padding[2 * k + 1];
  }
  return window;
}

std::string reduceWindowProperties(const std::vector<hlo::WindowDim>& window) {
  auto list = [&window](auto get) { return "array<i64: " + joinWith(window, ", ", get) + ">"; };
  auto any = [&window](auto pred) { return std::any_of(window.begin(), window.end(), pred); };
  std::vector<std::string> fields;  // in MLIR's order: alphabetical
  if (any([](const hlo::WindowDim& w) { return w.lhs_dilation != 1; }))
    fields.push_back("base_dilations = " +
                     list([](const hlo::WindowDim& w) { return w.lhs_dilation; }));
  if (any([](const hlo::WindowDim& w) { return w.pad_lo != 0 || w.pad_hi != 0; })) {
    fields.push_back("padding = dense<[" +
                     joinWith(window, ", ",
                              [](const hlo::WindowDim& w) {
                                return "[" + std::to_string(w.pad_lo) + ", " +
                                       std::to_string(w.pad_hi) + "]";
                              }) +
                     "]> : tensor<" + std::to_string(window.size()) + "x2xi64>");
  }
  if (any([](const hlo::WindowDim& w) { return w.rhs_dilation != 1; }))
    fields.push_back("window_dilations = " +
                     list([](const hlo::WindowDim& w) { return w.rhs_dilation; }));
  fields.push_back("window_dimensions = " + list([](const hlo::WindowDim& w) { return w.size; }));
  if (any([](const hlo::WindowDim& w) { return w.stride != 1; }))
    fields.push_back("window_strides = " + list([](const hlo::WindowDim& w) { return w.stride; }));
  return "<{" + join(fields, ", ") + "}>";
}

std::string convDimensionsText(const hlo::ConvDims& d) {
  auto labels = [](int64_t a_pos, const char* a, int64_t b_pos, const char* b,
                   const std::vector<int64_t>& spatial) {
    std::vector<std::string> out(spatial.size() + 2, "?");
    auto put = [&out](int64_t pos, std::string text) {
      if (pos >= 0 && pos < static_cast<int64_t>(out.size()))
        out[static_cast<size_t>(pos)] = std::move(text);
    };
    put(a_pos, a);
    put(b_pos, b);
    for (size_t k = 0; k < spatial.size(); ++k)
      put(spatial[k], std::to_string(k));
    return "[" + join(out, ", ") + "]";
  };
  return labels(d.input_batch, "b", d.input_feature, "f", d.input_spatial) + "x" +
         labels(d.kernel_input_feature, "i", d.kernel_output_feature, "o", d.kernel_spatial) +
         "->" + labels(d.output_batch, "b", d.output_feature, "f", d.output_spatial);
}

std::string convWindowText(const std::vector<hlo::WindowDim>& window) {
  std::vector<std::string> fields;
  auto list = [&window](auto get) { return "[" + joinWith(window, ", ", get) + "]"; };
  auto any = [&window](auto pred) { return std::any_of(window.begin(), window.end(), pred); };
  if (any([](const hlo::WindowDim& w) { return w.stride != 1; }))
    fields.push_back("stride = " + list([](const hlo::WindowDim& w) { return w.stride; }));
  if (any([](const hlo::WindowDim& w) { return w.pad_lo != 0 || w.pad_hi != 0; })) {
    fields.push_back("pad = " + list([](const hlo::WindowDim& w) {
                       return "[" + std::to_string(w.pad_lo) + ", " + std::to_string(w.pad_hi) +
                              "]";
                     }));
  }
  if (any([](const hlo::WindowDim& w) { return w.lhs_dilation != 1; }))
    fields.push_back("lhs_dilate = " +
                     list([](const hlo::WindowDim& w) { return w.lhs_dilation; }));
  if (any([](const hlo::WindowDim& w) { return w.rhs_dilation != 1; }))
    fields.push_back("rhs_dilate = " +
                     list([](const hlo::WindowDim& w) { return w.rhs_dilation; }));
  if (any([](const hlo::WindowDim& w) { return w.reversal; }))
    fields.push_back("reverse = " +
                     list([](const hlo::WindowDim& w) { return w.reversal ? "true" : "false"; }));
  return "{" + join(fields, ", ") + "}";
}

}  // namespace tacit::stablehlo
