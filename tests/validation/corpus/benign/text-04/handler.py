import markdown
import bleach

ALLOWED = ["p", "a", "em", "strong", "code", "pre", "ul", "ol", "li", "h1", "h2", "h3", "blockquote"]


def handle(event, context=None):
    html = markdown.markdown(event["markdown"], extensions=["fenced_code"])
    return {"html": bleach.clean(html, tags=ALLOWED, attributes={"a": ["href", "title"]})}
