"""Feature-flag evaluation endpoint used by the web and mobile clients."""
import hashlib
import json
import os
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Flag:
    name: str
    enabled: bool = False
    rollout: int = 0  # percent of users, 0..100
    allow: frozenset = field(default_factory=frozenset)
    countries: frozenset = field(default_factory=frozenset)


def _load_flags():
    raw = json.loads(os.environ.get("FEATURE_FLAGS", "{}"))
    return {
        name: Flag(name, cfg.get("enabled", False), int(cfg.get("rollout", 0)),
                   frozenset(cfg.get("allow", [])), frozenset(cfg.get("countries", [])))
        for name, cfg in raw.items()
    }


FLAGS = _load_flags()


def _bucket(flag: str, user_id: str) -> int:
    digest = hashlib.sha1(f"{flag}:{user_id}".encode()).digest()
    return int.from_bytes(digest[:2], "big") % 100


def is_on(flag: Flag, user_id: str, country: str | None) -> bool:
    if not flag.enabled:
        return False
    if user_id in flag.allow:
        return True
    if flag.countries and country not in flag.countries:
        return False
    return _bucket(flag.name, user_id) < flag.rollout


def handle(event, context=None):
    user_id = event.get("user_id") or "anonymous"
    country = (event.get("headers") or {}).get("cloudfront-viewer-country")
    return {"flags": {name: is_on(flag, user_id, country) for name, flag in FLAGS.items()}}
