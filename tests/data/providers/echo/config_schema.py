from memhost.schema import ConfigField, ProviderConfigSchema

CONFIG_SCHEMA = ProviderConfigSchema(
    name="echo",
    label="Echo",
    fields=(
        ConfigField("greeting", kind="text", default="hello"),
        ConfigField("api_key", kind="secret", env_key="ECHO_API_KEY"),
    ),
)
