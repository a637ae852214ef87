package io.tsfilecatalog.spark;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.SupportsTruncate;
import org.apache.spark.sql.connector.write.Write;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.execution.datasources.v2.python.PythonDataSourceV2;
import org.apache.spark.sql.execution.datasources.v2.python.PythonTable;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * A write into a catalog table: Spark's own Python-source write, given the table's stored write
 * options (path, TsFile table name, tagColumns, ...) under the options the user set on this
 * write. One write is one commit of the {@code tsfile} source's batch writer.
 */
class TsFileWriteBuilder implements WriteBuilder, SupportsTruncate {
  private final StructType tableSchema;
  private final Map<String, String> tableOptions;
  private final LogicalWriteInfo info;
  private boolean truncate;

  TsFileWriteBuilder(StructType tableSchema, Map<String, String> tableOptions, LogicalWriteInfo info) {
    this.tableSchema = tableSchema;
    this.tableOptions = tableOptions;
    this.info = info;
  }

  @Override
  public WriteBuilder truncate() {
    truncate = true;
    return this;
  }

  @Override
  public Write build() {
    Map<String, String> options = new HashMap<>(info.options().asCaseSensitiveMap());
    // The table's own options win: a write cannot move the table or rename its TAGs.
    options.putAll(tableOptions);
    LogicalWriteInfo merged = new WriteInfo(info, new CaseInsensitiveStringMap(options));
    PythonDataSourceV2 source = new PythonDataSourceV2();
    source.setShortName(Scans.SHORT_NAME);
    WriteBuilder builder = new PythonTable(source, Scans.SHORT_NAME, tableSchema).newWriteBuilder(merged);
    if (truncate) {
      builder = ((SupportsTruncate) builder).truncate();
    }
    return builder.build();
  }

  /** Spark's write info with the merged options. */
  private static final class WriteInfo implements LogicalWriteInfo {
    private final LogicalWriteInfo info;
    private final CaseInsensitiveStringMap options;

    WriteInfo(LogicalWriteInfo info, CaseInsensitiveStringMap options) {
      this.info = info;
      this.options = options;
    }

    @Override
    public CaseInsensitiveStringMap options() {
      return options;
    }

    @Override
    public String queryId() {
      return info.queryId();
    }

    @Override
    public StructType schema() {
      return info.schema();
    }

    @Override
    public Optional<StructType> rowIdSchema() {
      return info.rowIdSchema();
    }

    @Override
    public Optional<StructType> metadataSchema() {
      return info.metadataSchema();
    }
  }
}
