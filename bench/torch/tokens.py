"""bench.TokenIDs (../tokens.go) in Python: the inputs of the imported-model
cases, the same ids on both sides without a file passed between them."""

_M = (1 << 64) - 1


def token_ids(t, v):
    """t ids below v: SplitMix64 seeded with t, id = output mod v."""
    s, out = t, []
    for _ in range(t):
        s = (s + 0x9E3779B97F4A7C15) & _M
        z = s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M
        out.append((z ^ (z >> 31)) % v)
    return out


# the same first ids as bench/tokens_test.go asserts
assert token_ids(200, 200)[:8] == [137, 81, 178, 47, 78, 165, 149, 118], "token_ids is not bench.TokenIDs"
