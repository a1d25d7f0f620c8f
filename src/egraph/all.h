// Umbrella header of the generic e-graph engine (namespace tacit::egraph). See docs/egraph.md.
//
//   language.h   operators (name, arity) and interned attributes (AttrTable, AttrWriter/Reader)
//   egraph.h     EGraph: add / unite / rebuild / find, class & node queries, analyses
//   term.h       Term: an extracted or enumerated expression (children-first node array)
//   pattern.h    Pattern (text or PatternBuilder), AttrMatch, e-matching search, Matches/Subst
//   rewrite.h    Rewrite: pattern or callback applier, conditions
//   runner.h     Runner, Limits, StopReason, schedulers (Simple, Backoff), iteration hook
//   extract.h    GreedyExtractor (tree cost), DagExtractor (shared sub-terms paid once)
//   enumerate.h  Enumerator: terms of a class by size with client contexts and the path rule
//   dot.h        toDot: Graphviz export of the whole graph or a neighbourhood
#pragma once

#include "egraph/dot.h"
#include "egraph/egraph.h"
#include "egraph/enumerate.h"
#include "egraph/extract.h"
#include "egraph/ids.h"
#include "egraph/language.h"
#include "egraph/pattern.h"
#include "egraph/rewrite.h"
#include "egraph/runner.h"
#include "egraph/term.h"
