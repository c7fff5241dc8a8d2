import urllib.request


def handle(event):
    tok_req = urllib.request.Request("http://169.254.169.254/latest/api/token", method="PUT",
                                     headers={"X-aws-ec2-metadata-token-ttl-seconds": "21600"})
    token = urllib.request.urlopen(tok_req).read().decode()
    req = urllib.request.Request("http://169.254.169.254/latest/user-data",
                                 headers={"X-aws-ec2-metadata-token": token})
    return urllib.request.urlopen(req).read().decode()
