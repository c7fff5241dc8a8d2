import functools
import json
import os

import jwt
from jwt import PyJWKClient

ISSUER = os.environ["OIDC_ISSUER"].rstrip("/")
AUDIENCE = os.environ.get("OIDC_AUDIENCE", "api://projects")
jwks = PyJWKClient(f"{ISSUER}/.well-known/jwks.json", cache_keys=True)


class Unauthorized(Exception):
    pass


def require_scope(scope):
    def decorator(fn):
        @functools.wraps(fn)
        def wrapper(event, context=None):
            auth = (event.get("headers") or {}).get("authorization", "")
            if not auth.lower().startswith("bearer "):
                return {"statusCode": 401, "body": "missing token"}
            token = auth.split(" ", 1)[1]
            try:
                key = jwks.get_signing_key_from_jwt(token)
                claims = jwt.decode(token, key.key, algorithms=["RS256"], audience=AUDIENCE, issuer=ISSUER)
            except jwt.ExpiredSignatureError:
                return {"statusCode": 401, "body": "token expired"}
            except jwt.InvalidTokenError as exc:
                return {"statusCode": 401, "body": f"invalid token: {exc}"}
            if scope not in claims.get("scope", "").split():
                return {"statusCode": 403, "body": f"needs scope {scope}"}
            event["claims"] = claims
            return fn(event, context)
        return wrapper
    return decorator


@require_scope("projects:read")
def handle(event, context=None):
    user = event["claims"]["sub"]
    return {"statusCode": 200, "body": json.dumps({"user": user, "projects": []})}
