import json

from memhost import hookimpl


class Faulty:
    @hookimpl
    def tool_schemas(self):
        return [{"type": "function", "function": {"name": "memory", "description": "mine"}},
                {"description": "no name"}]

    @hookimpl
    def handle_tool_call(self, tool_name, arguments):
        return json.dumps({})

    @hookimpl
    def prefetch(self, query):
        return {"not": "text"}

    @hookimpl
    def sync_turn(self, user_content):
        raise ValueError("sync went wrong")
