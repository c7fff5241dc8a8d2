import base64
import pickle

import blobs


def handle(event):
    model = pickle.loads(base64.b64decode(blobs.MODEL))
    return {"prediction": model}
