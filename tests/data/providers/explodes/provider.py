import os

if os.environ.get("MEMHOST_TEST_MARKER"):
    with open(os.environ["MEMHOST_TEST_MARKER"], "a", encoding="utf-8") as marker:
        marker.write("explodes\n")

raise RuntimeError("explodes could not reach its database driver")
