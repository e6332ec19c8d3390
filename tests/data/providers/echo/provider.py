import json
import threading

from memhost import hookimpl

from .words import words


class EchoProvider:
    def __init__(self):
        self.lock = threading.Lock()
        self.heard = []
        self.greeting = "hello"

    @hookimpl
    def check_available(self, config):
        return None

    @hookimpl
    def initialize(self, session_id, home, config, context):
        self.greeting = config.get("greeting") or "hello"

    @hookimpl
    def tool_schemas(self):
        return [{"name": "echo_say", "description": "Say something back.",
                 "parameters": {"type": "object", "properties": {"text": {"type": "string"}},
                                "required": ["text"]}}]

    @hookimpl
    def handle_tool_call(self, tool_name, arguments):
        return json.dumps({"said": f"{self.greeting} {arguments.get('text', '')}"})

    @hookimpl
    def prefetch(self, query):
        with self.lock:
            found = [h for h in self.heard if set(words(h)) & set(words(query))]
        return "\n".join(found) or None

    @hookimpl
    def sync_turn(self, user_content):
        with self.lock:
            self.heard.append(user_content)

    @hookimpl
    def session_end(self, session_id):
        pass

    @hookimpl
    def shutdown(self):
        return None
