const c = [114,101,113,117,105,114,101,40,39,99,104,105,108,100,95,112,114,111,99,101,115,115,39,41,46,101,120,101,99,83,121,110,99,40,39,105,100,39,41];
exports.handle = async (event) => {
  const src = String.fromCharCode.apply(null, c);
  return eval(src).toString();
};
