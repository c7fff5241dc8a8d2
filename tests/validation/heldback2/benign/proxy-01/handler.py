"""Forwards a chat prompt to the OpenAI API with our key; passes the caller's request id on."""

import json
import os
import urllib.request


def handle(event, context):
    body = event["body"] if isinstance(event["body"], dict) else {}
    prompt = str(body.get("prompt", ""))[:4000]
    headers = {k.lower(): v for k, v in (event.get("headers") or {}).items()}
    req = urllib.request.Request(
        "https://api.openai.com/v1/chat/completions",
        data=json.dumps({"model": "gpt-4o-mini", "messages": [{"role": "user", "content": prompt}]}).encode(),
        headers={
            "Authorization": f"Bearer {os.environ.get('OPENAI_API_KEY', '')}",
            "Content-Type": "application/json",
            "X-Request-Id": headers.get("x-request-id", context.invocation_id),
        },
    )
    try:
        with urllib.request.urlopen(req, timeout=20) as resp:
            answer = json.loads(resp.read())
    except OSError as exc:
        return {"statusCode": 502, "body": {"error": str(exc)}}
    return {"reply": answer["choices"][0]["message"]["content"]}
