import os
import numpy as np
import onnxruntime as ort

_session = None

def _model():
    global _session
    if _session is None:
        _session = ort.InferenceSession(os.path.join(os.path.dirname(__file__), "model.onnx"))
    return _session

def handle(event, context):
    x = np.asarray(event["body"]["features"], dtype=np.float32).reshape(1, -1)
    name = _model().get_inputs()[0].name
    (scores,) = _model().run(None, {name: x})
    return {"label": int(scores.argmax()), "score": float(scores.max())}
