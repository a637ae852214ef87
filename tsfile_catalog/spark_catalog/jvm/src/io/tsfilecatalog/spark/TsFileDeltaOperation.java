package io.tsfilecatalog.spark;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.connector.expressions.FieldReference;
import org.apache.spark.sql.connector.expressions.NamedReference;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.write.DeltaWrite;
import org.apache.spark.sql.connector.write.DeltaWriteBuilder;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.SupportsDelta;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * A row-level operation Spark writes as a delta, the changed rows only, where the delegate
 * planned one ({@code plan_delta}: a {@code key.duplicates = last} table's {@code UPDATE}): the
 * scan is the table's ordinary one (Spark filters it by the statement's condition), the rows'
 * id is the table key, and the write appends the updated rows, which replace the old rows of
 * their keys, in one commit against the version read ({@link RowFedWrite.Delta}).
 */
class TsFileDeltaOperation implements SupportsDelta {
  private final TsFileTable table;
  private final Command command;
  /** The delegate's plan: {@code {"row_id": [...], "write_options": {...}}}. */
  private final JsonNode planned;

  TsFileDeltaOperation(TsFileTable table, Command command, JsonNode planned) {
    this.table = table;
    this.command = command;
    this.planned = planned;
  }

  TsFileTable table() {
    return table;
  }

  @Override
  public Command command() {
    return command;
  }

  @Override
  public String description() {
    return "tsfile delta " + command;
  }

  @Override
  public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
    return table.newScanBuilder(options);
  }

  @Override
  public NamedReference[] rowId() {
    List<NamedReference> columns = new ArrayList<>();
    for (JsonNode column : planned.get("row_id")) {
      columns.add(FieldReference.column(column.asText())); // one name, never parsed
    }
    return columns.toArray(new NamedReference[0]);
  }

  @Override
  public DeltaWriteBuilder newWriteBuilder(LogicalWriteInfo info) {
    Map<String, String> options = new HashMap<>(table.writeOptions());
    options.putAll(Client.toMap(planned.get("write_options")));
    return new DeltaWriteBuilder() {
      @Override
      public DeltaWrite build() {
        return new RowFedWrite.Delta(
            new TsFileWriteBuilder(table.schema(), options, info, null).build(),
            command.name(),
            info.queryId(),
            options);
      }
    };
  }
}
