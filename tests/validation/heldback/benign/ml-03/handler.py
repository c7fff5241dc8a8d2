import os, json
import requests

def handle(event, context):
    prompt = event["body"]["prompt"][:4000]
    r = requests.post(
        "https://api.openai.com/v1/chat/completions",
        headers={"Authorization": f"Bearer {os.environ['OPENAI_API_KEY']}"},
        json={"model": "gpt-4o-mini", "messages": [{"role": "user", "content": prompt}]},
        timeout=30,
    )
    r.raise_for_status()
    return {"answer": r.json()["choices"][0]["message"]["content"]}
