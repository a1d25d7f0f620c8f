#include "hlo_eval/random_literal.h"

#include "hlo_eval/kernels/scalar.h"
#include "support/diagnostic.h"

namespace tacit::hlo {
namespace {

using P = PrimitiveType;

// SplitMix64 (Steele, Lea, Flood 2014): tiny, fast and fully specified.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }

 private:
  uint64_t state_;
};

template <P kT>
kernels::Native<kT> draw(SplitMix64& rng) {
  using T = kernels::Native<kT>;
  uint64_t r = rng.next();
  if constexpr (kT == P::kPred) {
    return static_cast<T>(r >> 63);
  } else if constexpr (kT == P::kS8 || kT == P::kU8) {
    return static_cast<T>(r >> 56);
  } else if constexpr (kernels::kIsSigned<kT>) {
    return static_cast<T>(static_cast<int64_t>(r % 201) - 100);
  } else if constexpr (kernels::kIsInt<kT>) {
    return static_cast<T>(r % 101);
  } else {
    double u = static_cast<double>(r >> 40) / static_cast<double>(uint64_t{1} << 24);  // [0, 1)
    return kernels::convert<P::kF64, kT>(2.0 * u - 1.0);
  }
}

}  // namespace

uint64_t mixSeed(uint64_t seed, uint64_t index) {
  SplitMix64 rng(seed ^ (0x632be59bd9b4e019ull * (index + 1)));
  return rng.next();
}

Literal randomLiteral(const Shape& shape, uint64_t seed) {
  if (shape.isTuple()) {
    std::vector<Literal> elements;
    for (size_t i = 0; i < shape.tupleShapes().size(); ++i) {
      elements.push_back(randomLiteral(shape.tupleShapes()[i], mixSeed(seed, i)));
    }
    return Literal::tuple(std::move(elements));
  }
  if (!shape.isArray() || !isEvaluable(shape.elementType())) {
    fail("cannot make random data of shape " + shape.shortStr());
  }
  Literal l(shape);
  SplitMix64 rng(seed);
  dispatchEvaluable(shape.elementType(), [&]<P kT>() {
    auto data = l.data<kernels::Native<kT>>();
    for (auto& v : data)
      v = draw<kT>(rng);
  });
  return l;
}

}  // namespace tacit::hlo
