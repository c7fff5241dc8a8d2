"""Scheduled: removes cached renders in /tmp/render-cache older than MAX_AGE_S."""

import os
import shutil
import time

CACHE = "/tmp/render-cache"


def handle(event, context):
    max_age = int(os.environ.get("MAX_AGE_S", "3600"))
    os.makedirs(CACHE, exist_ok=True)
    now, removed, kept = time.time(), 0, 0
    for entry in os.scandir(CACHE):
        if now - entry.stat(follow_symlinks=False).st_mtime > max_age:
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                os.remove(entry.path)
            removed += 1
        else:
            kept += 1
    usage = shutil.disk_usage("/tmp")
    return {"removed": removed, "kept": kept, "tmp_free_mb": usage.free // 2**20}
