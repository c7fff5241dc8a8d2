import os, socket, time

def handle(event, context):
    host, port = os.environ.get("STATSD_HOST", "127.0.0.1"), int(os.environ.get("STATSD_PORT", "8125"))
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    metric = f"fn.{event['path'].strip('/').replace('/', '.') or 'root'}:1|c"
    sock.sendto(metric.encode(), (host, port))
    sock.close()
    return {"ts": time.time()}
