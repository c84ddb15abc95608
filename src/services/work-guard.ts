import { AppError, MESSAGES } from '../errors';

/**
 * One request's write work, as the database watchdog sees it (a request answered
 * 503 has written nothing and never writes afterwards). The watchdog aborts a request it answers;
 * an aborted request's transaction refuses to commit and rolls back. Once a COMMIT is on its way
 * the request can no longer be aborted: its answer waits for the commit's outcome instead.
 */
export class WorkGuard {
  private state: 'running' | 'committing' | 'aborted' = 'running';

  get aborted(): boolean {
    return this.state === 'aborted';
  }

  /** Throws when aborted; otherwise no abort is possible until `commitSettled()`. */
  beforeCommit(): void {
    this.check();
    this.state = 'committing';
  }

  commitSettled(): void {
    if (this.state === 'committing') this.state = 'running';
  }

  check(): void {
    if (this.state === 'aborted') throw new AppError('SERVICE_UNAVAILABLE', MESSAGES.unavailable);
  }

  /** True when aborted (nothing of this request will be committed); false during a commit. */
  abort(): boolean {
    if (this.state === 'committing') return false;
    this.state = 'aborted';
    return true;
  }
}
