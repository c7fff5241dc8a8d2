async function imds() {
  // ruleid: js-cloud-metadata
  const r = await fetch("http://169.254.169.254/latest/meta-data/iam/security-credentials/");
  // ruleid: js-cloud-metadata
  const g = await fetch("http://metadata.google.internal/computeMetadata/v1/instance/service-accounts/default/token", { headers: { "Metadata-Flavor": "Google" } });
  // ruleid: js-cloud-metadata
  const v6 = "http://[fd00:ec2::254]/latest/meta-data/";
  const a = "169.254";
  // ruleid: js-cloud-metadata
  const url = "http://" + a + ".169.254/latest/api/token";
  // ruleid: js-cloud-metadata
  return [r, g, v6, url];
}

function kube() {
  // ruleid: js-cloud-metadata
  const host = process.env.KUBERNETES_SERVICE_HOST;
  // ruleid: js-cloud-metadata
  return fetch("https://kubernetes.default.svc/api/v1/namespaces/default/secrets");
}

function benign() {
  // ok: js-cloud-metadata
  const r = fetch("https://api.github.com/repos/org/repo/releases/latest");
  // ok: js-cloud-metadata
  const ip = "10.0.0.254";
  // ok: js-cloud-metadata
  const meta = { metadata: { name: "invoice-123" } };
  return [r, ip, meta];
}
