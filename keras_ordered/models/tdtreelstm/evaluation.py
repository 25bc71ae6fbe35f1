"""What a dependency-tree language model is worth on held-out trees.

- `perplexity(model, trees)`: per-word perplexity of P(S | T).
- `completion_questions(trees, ...)`: MSR-style sentence-completion
  questions built deterministically from held-out sentences: one content
  word replaced by four impostors of the same POS and similar training
  frequency, the tree fixed; `completion_accuracy` scores them (chance 20 %).
- `perturbed_heads(heads, ...)` and `tree_preference(model, trees)`: the
  gold tree against trees with one attachment changed; how often the model
  prefers the gold tree (chance 50 %).
- `chain_heads(n)`: the left-to-right chain, under which the TD-TreeLSTM is
  a sequential LSTM language model (every word the GEN-R child of the word
  before it).

Plain Python and NumPy around `model.score`.
"""

import collections
import math

import numpy as np

from keras_ordered.datasets.dependency import check_heads

CONTENT_TAGS = ("NN", "NNS", "VB", "VBD", "VBG", "VBN", "VBP", "VBZ", "JJ",
                "JJR", "JJS", "RB")
"""POS tags of the words a completion question may blank out (common
nouns, verbs, adjectives, adverbs; proper nouns and numbers excluded)."""


def chain_heads(n):
    """Heads of the left-to-right chain of n words: word k's head is k - 1."""
    return tuple(range(n))


def perplexity(model, trees, sequential=False, batch_size=64):
    """`(perplexity, log_prob_sum, words)` of trees under `model`."""
    sentences = [(t.words, chain_heads(len(t.words)) if sequential else t.heads)
                 for t in trees]
    scores = model.score(sentences, batch_size=batch_size)
    total = sum(s["log_prob"] for s in scores)
    words = sum(s["words"] for s in scores)
    return math.exp(min(-total / words, 50.0)), total, words


def training_statistics(trees, vocabulary):
    """`(counts, tags)`: training counts of the vocabulary's words and each
    word's most frequent POS tag (normalised as the vocabulary does)."""
    counts = collections.Counter()
    tag_counts = collections.defaultdict(collections.Counter)
    for tree in trees:
        for word, tag in zip(tree.words, tree.tags):
            word = vocabulary.normalise(word)
            counts[word] += 1
            tag_counts[word][tag] += 1
    tags = {w: sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
            for w, c in tag_counts.items()}
    return counts, tags


def completion_questions(trees, vocabulary, counts, tags, choices=5,
                         min_count=5):
    """MSR-style questions, deterministically, from held-out trees.

    In each sentence, the content word (a tag of `CONTENT_TAGS`, in the
    vocabulary, seen at least `min_count` times in training) nearest the
    middle of the sentence is blanked out; its impostors are the
    `choices - 1` vocabulary words whose most frequent training tag is the
    blanked word's tag in this sentence, nearest in training count (ties by
    spelling), not in the sentence. Sentences without such a word or
    impostors are skipped.

    Returns:
        list of dicts: `tree` (index into `trees`), `position` (0-based),
        `candidates` (the words; the correct one first).
    """
    by_tag = collections.defaultdict(list)
    for word in vocabulary.words[3:]:
        if word in tags and counts[word] >= min_count:
            by_tag[tags[word]].append(word)
    questions = []
    for index, tree in enumerate(trees):
        n = len(tree.words)
        positions = sorted(range(n), key=lambda i: (abs(i - (n - 1) / 2), i))
        for position in positions:
            tag = tree.tags[position]
            word = vocabulary.normalise(tree.words[position])
            if tag not in CONTENT_TAGS or counts[word] < min_count:
                continue
            if word not in vocabulary.index:
                continue
            present = {vocabulary.normalise(w) for w in tree.words}
            pool = [w for w in by_tag[tag] if w not in present]
            if len(pool) < choices - 1:
                continue
            pool.sort(key=lambda w: (abs(math.log(counts[w]) - math.log(counts[word])), w))
            questions.append({
                "tree": index, "position": position,
                "candidates": [tree.words[position]] + pool[:choices - 1],
            })
            break
    return questions


def completion_accuracy(model, trees, questions, sequential=False,
                        batch_size=64):
    """Fraction of questions whose correct candidate scores highest
    (log P(S | T) of the whole sentence, the tree fixed)."""
    if not questions:
        return float("nan")
    sentences = []
    for q in questions:
        tree = trees[q["tree"]]
        heads = chain_heads(len(tree.words)) if sequential else tree.heads
        for candidate in q["candidates"]:
            words = list(tree.words)
            words[q["position"]] = candidate
            sentences.append((words, heads))
    scores = [s["log_prob"] for s in model.score(sentences, batch_size=batch_size)]
    k = len(questions[0]["candidates"])
    correct = 0
    for i in range(len(questions)):
        row = scores[i * k:(i + 1) * k]
        correct += int(int(np.argmax(row)) == 0 and row[0] > max(row[1:]))
    return correct / len(questions)


def perturbed_heads(heads, count=3, seed=0):
    """Up to `count` trees with one attachment of `heads` changed.

    Deterministic for a `seed`: words other than the root word are tried
    in a seeded random order; each gets the first other word, in a seeded
    random order, that as its new head keeps a tree (no cycle; the root
    word keeps head 0). Distinct results only.
    """
    heads = check_heads(heads)
    n = len(heads)
    rng = np.random.default_rng(seed)
    results = []
    for word in rng.permutation(n) + 1:
        if heads[word - 1] == 0:
            continue
        options = [h for h in rng.permutation(n) + 1
                   if h != word and h != heads[word - 1]]
        for head in options:
            new = list(heads)
            new[word - 1] = int(head)
            try:
                check_heads(new)
            except ValueError:
                continue
            if tuple(new) not in results:
                results.append(tuple(new))
            break
        if len(results) == count:
            break
    return results


def tree_preference(model, trees, count=3, batch_size=64):
    """`(fraction, pairs)`: how often log P(S | gold) > log P(S | perturbed)
    over every (sentence, perturbed tree) pair (ties count one half)."""
    sentences, groups = [], []
    for index, tree in enumerate(trees):
        others = perturbed_heads(tree.heads, count, seed=index)
        if not others:
            continue
        groups.append(len(others))
        sentences.append((tree.words, tree.heads))
        sentences += [(tree.words, h) for h in others]
    scores = [s["log_prob"] for s in model.score(sentences, batch_size=batch_size)]
    wins, pairs, k = 0.0, 0, 0
    for size in groups:
        gold = scores[k]
        for other in scores[k + 1:k + 1 + size]:
            wins += 1.0 if gold > other else 0.5 if gold == other else 0.0
            pairs += 1
        k += size + 1
    return (wins / pairs if pairs else float("nan")), pairs
