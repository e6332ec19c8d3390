"""What the corpus scripts share: random tokens from one seeded generator, and GitHub/npm
tokens with their real CRC32 check digits (a detector may verify them)."""
import random
import string
import zlib

A = string.ascii_letters + string.digits
B62 = string.digits + string.ascii_uppercase + string.ascii_lowercase


class Tokens:
    def __init__(self, seed):
        self.random = random.Random(seed)

    def tok(self, n, alphabet=A):
        return "".join(self.random.choice(alphabet) for _ in range(n))

    def crc_tok(self, prefix):
        body = self.tok(30)
        n, out = zlib.crc32(body.encode()), ""
        while n:
            n, r = divmod(n, 62)
            out = B62[r] + out
        return prefix + body + out.rjust(6, "0")


def collector():
    """A case list and the ``add(family, shape, text, *secrets)`` that fills it."""
    cases = []

    def add(family, shape, text, *secrets):
        cases.append({"family": family, "shape": shape, "text": text, "secrets": list(secrets)})

    return cases, add
