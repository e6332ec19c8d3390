from memhost import hookimpl


class Fine:
    @hookimpl
    def prefetch(self, query):
        return None
