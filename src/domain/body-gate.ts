/**
 * What the body reader (http/body.ts, and imports, which read a body in pieces) asks of upload
 * admission (http/admission.ts implements it) for each chunk it keeps: count these bytes, and may
 * I go on reading? When not, the reader stops reading (TCP pushes back on the
 * client) until `onResume`'s callback runs.
 */
export interface BodyGate {
  take(bytes: number): boolean;
  /**
   * Gives back bytes taken earlier that the request no longer holds (an import, which holds one
   * session at a time of a body of any size); a body read whole gives back nothing until its end.
   */
  give(bytes: number): void;
  onResume(resume: () => void): void;
  /** How long the server has held this body's reading back (not the client's slowness). */
  pausedMs(): number;
}
