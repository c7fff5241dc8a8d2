from transformers import pipeline

_clf = None

def handle(event, context):
    global _clf
    if _clf is None:
        _clf = pipeline("sentiment-analysis", model="distilbert-base-uncased-finetuned-sst-2-english")
    text = event["body"].get("text", "")[:1000]
    return _clf(text)[0]
