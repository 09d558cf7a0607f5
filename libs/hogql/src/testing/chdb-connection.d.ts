// The repository resolves modules the classic Node way (`moduleResolution: node`), which does not
// read package `exports`, so the `chdb/connection` subpath needs its types pointed out by hand.
declare module 'chdb/connection' {
  export * from 'chdb/dist/connection';
}
