import time

from memhost import hookimpl


class Sleepy:
    @hookimpl
    def prefetch(self, query):
        time.sleep(3)
        return None
