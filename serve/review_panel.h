#pragma once
// The live page's review desk: the open questions of `kestrel run --review`
// (review_questions), each with the proposal in an editable box and its
// accept, accept-as-edited and reject buttons, which post to
// /api/reviews/N/{accept,edit,reject} with the page's token.

#include <string>
#include <vector>

#include "store/human_records.h"

namespace kestrel::serve {

// "" when no question is open.
std::string ReviewPanelHtml(const std::vector<ReviewQuestionRecord>& questions);

}  // namespace kestrel::serve
