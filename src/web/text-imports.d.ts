// Files imported with a "?text" suffix are their contents as a string (tsup.config.ts, textImports).
declare module '*?text' {
  const text: string;
  export default text;
}

// The package's version, written in by the build (tsup.config.ts, define).
declare const __AGENTWARDEN_VERSION__: string;
