"""The Python a user would write to compare a draft model's vocabulary with its target's.

    python bench/vocab_peer.py DRAFT_DIR TARGET_DIR

Loads both tokenizer.json files with `tokenizers.Tokenizer.from_file`, compares the vocabularies
(added tokens included) and the added tokens' text and special flags, prints the first differing
ids and exits 1 when they differ, 0 when they are the same. bench/vocab.sh times it beside
`dflash-check lint DRAFT --family draft --target TARGET`.
"""

import sys

from tokenizers import Tokenizer


def main(draft_dir, target_dir):
    draft = Tokenizer.from_file(f"{draft_dir}/tokenizer.json")
    target = Tokenizer.from_file(f"{target_dir}/tokenizer.json")
    by_id = lambda t: {i: tok for tok, i in t.get_vocab(with_added_tokens=True).items()}
    d, t = by_id(draft), by_id(target)
    differing = [i for i in sorted(set(d) | set(t)) if d.get(i) != t.get(i)]
    added = lambda t: {i: (a.content, a.special) for i, a in t.get_added_tokens_decoder().items()}
    da, ta = added(draft), added(target)
    differing_added = [i for i in sorted(set(da) | set(ta)) if da.get(i) != ta.get(i)]
    if len(d) != len(t):
        print(f"sizes differ: {len(d)} here, {len(t)} in the target")
    for i in differing[:3]:
        print(f"{i} {d.get(i)!r} here, {t.get(i)!r} in the target")
    for i in differing_added[:3]:
        print(f"added {i} {da.get(i)!r} here, {ta.get(i)!r} in the target")
    return 1 if differing or differing_added or len(d) != len(t) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
