"""The configuration errors front ends catch; pydantic-free so the hooks' light path can raise them too."""


class ConfigError(Exception):
    """A setting is invalid or the config file cannot be used; the message is meant for the user."""


class LightConfigError(ConfigError):
    """A setting the hooks or `eywa get` need cannot be read (core/config/light.py); hooks fail open on it."""
