import pino from 'pino';

export type Logger = pino.Logger;

/** JSON lines on stdout. Tokens, bodies and markdown are never passed to it. */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: ['authorization', '*.authorization', 'token', '*.token'], remove: true },
    },
    destination,
  );
}
