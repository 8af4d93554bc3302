import pg from 'pg';

/** A column as PostgreSQL describes a statement's result: its name and its type's OID. */
export interface ResultColumn {
  name: string;
  dataTypeID: number;
}

/**
 * What a statement would return, without running it: the extended protocol's Parse and Describe
 * (what a driver does before binding values), then Sync. pg has no call for it, so this is a
 * "submittable", the object `client.query` accepts to speak the protocol itself. Use it on a client
 * of its own (not pipelined).
 */
class Describe {
  private columns: ResultColumn[] = [];
  constructor(
    private readonly text: string,
    private readonly done: (error: Error | undefined, columns: ResultColumn[]) => void,
  ) {}
  submit(connection: { parse(q: { text: string; types: number[] }): void; describe(m: { type: 'S'; name: string }): void; sync(): void }) {
    connection.parse({ text: this.text, types: [] });
    connection.describe({ type: 'S', name: '' });
    connection.sync();
  }
  handleRowDescription(msg: { fields: Array<{ name: string; dataTypeID: number }> }) {
    this.columns = msg.fields.map((f) => ({ name: f.name, dataTypeID: f.dataTypeID }));
  }
  // After an error pg forgets the query, so its ReadyForQuery never reaches this object.
  handleError(error: Error) {
    this.done(error, []);
  }
  handleReadyForQuery() {
    this.done(undefined, this.columns);
  }
  handleEmptyQuery() {}
  handleCommandComplete() {}
  handleDataRow() {}
}

export function describeStatement(client: pg.Client, text: string): Promise<ResultColumn[]> {
  return new Promise((resolve, reject) => {
    void client.query(new Describe(text, (error, columns) => (error ? reject(error) : resolve(columns))) as unknown as pg.QueryConfig);
  });
}
