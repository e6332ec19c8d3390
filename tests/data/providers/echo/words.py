import os

if os.environ.get("MEMHOST_TEST_MARKER"):
    with open(os.environ["MEMHOST_TEST_MARKER"], "a", encoding="utf-8") as marker:
        marker.write("echo\n")


def words(text):
    return [w for w in text.lower().split() if len(w) > 2]
