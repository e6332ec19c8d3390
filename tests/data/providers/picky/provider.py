from memhost import hookimpl


class PickyProvider:
    @hookimpl
    def check_available(self, config):
        if not config.get("endpoint"):
            return "picky needs an endpoint: set providers.picky.endpoint in config.toml"
        return None

    @hookimpl
    def prefetch(self, query):
        return None
