package io.tsfilecatalog.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.spark.sql.connector.expressions.filter.Predicate;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.SupportsDynamicOverwrite;
import org.apache.spark.sql.connector.write.SupportsOverwriteV2;
import org.apache.spark.sql.connector.write.SupportsTruncate;
import org.apache.spark.sql.connector.write.Write;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.execution.datasources.v2.python.PythonDataSourceV2;
import org.apache.spark.sql.execution.datasources.v2.python.PythonTable;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * A write into a catalog table: Spark's own Python-source write, given the table's stored write
 * options (path, TsFile table name, tagColumns, ...) under the options the user set on this
 * write. One write is one commit of the {@code tsfile} source's batch writer.
 *
 * <p>{@code INSERT OVERWRITE} truncates (replaces every row); {@code writeTo(...).overwrite(c)}
 * and {@code INSERT INTO ... REPLACE WHERE c} replace the rows matching {@code c}, which the
 * delegate writes as the writer's {@code replaceWhere} when it can evaluate it exactly (else the
 * write is refused), its straddling parts rewritten as Spark tasks ({@link PrestagedWrite}).
 */
class TsFileWriteBuilder implements SupportsOverwriteV2, SupportsDynamicOverwrite {
  private final StructType tableSchema;
  private final Map<String, String> tableOptions;
  private final LogicalWriteInfo info;
  private final JsonNode scan;
  private boolean truncate;
  private String replaceWhere;

  /** {@code scan}: the table's scan description, which binds an overwrite's condition. */
  TsFileWriteBuilder(
      StructType tableSchema, Map<String, String> tableOptions, LogicalWriteInfo info, JsonNode scan) {
    this.tableSchema = tableSchema;
    this.tableOptions = tableOptions;
    this.info = info;
    this.scan = scan;
  }

  @Override
  public WriteBuilder truncate() {
    truncate = true;
    replaceWhere = null;
    return this;
  }

  /**
   * {@code writeTo(t).overwritePartitions()}: refused, saying what replaces rows instead. A
   * tsfile table has no partitions, and which devices the rows hold is known only once they
   * are written, too late to rewrite the parts those devices share with others in the write.
   */
  @Override
  public WriteBuilder overwriteDynamicPartitions() {
    throw new UnsupportedOperationException(
        "overwritePartitions() is not supported on tsfile tables (they have no partitions): "
            + "replace rows by condition with writeTo(t).overwrite(condition), e.g. "
            + "overwrite(col('device') == 'd1'), or INSERT INTO t REPLACE WHERE condition");
  }

  /**
   * Spark asks this before {@link #overwrite} and, told no, fails with a message naming neither
   * the condition nor why; a condition the writer cannot take is refused here, saying both.
   */
  @Override
  public boolean canOverwrite(Predicate[] predicates) {
    if (scan == null) {
      return false;
    }
    if (where(predicates) == null) {
      throw refusal(predicates);
    }
    return true;
  }

  @Override
  public WriteBuilder overwrite(Predicate[] predicates) {
    replaceWhere = where(predicates);
    if (replaceWhere == null) {
      throw refusal(predicates);
    }
    truncate = true;
    return this;
  }

  private static IllegalArgumentException refusal(Predicate[] predicates) {
    return new IllegalArgumentException(
        "the overwrite condition "
            + Arrays.toString(predicates)
            + " cannot be evaluated exactly by the tsfile writer (it takes comparisons of "
            + "columns with literals, IN, IS NULL, AND, OR, NOT)");
  }

  /** The conjunction of {@code predicates} as replaceWhere text, or null. */
  private String where(Predicate[] predicates) {
    if (scan == null) {
      return null;
    }
    ObjectNode request = Client.object();
    request.set("scan", scan);
    ArrayNode list = request.putArray("predicates");
    for (Predicate predicate : predicates) {
      list.add(Scans.toJson(predicate));
    }
    request.put("time_zone", SQLConf.get().sessionLocalTimeZone());
    JsonNode reply = Client.call("push_predicates", request);
    if (reply.get("pushed").size() != predicates.length || reply.path("where").isNull()) {
      return null;
    }
    return reply.get("where").asText();
  }

  @Override
  public Write build() {
    Map<String, String> options = new HashMap<>(info.options().asCaseSensitiveMap());
    // The table's own options win: a write cannot move the table, rename its TAGs or write
    // its times in another unit. The source reads options case-insensitively, so a user's
    // key in another case must go too, or either value could win.
    for (String key : tableOptions.keySet()) {
      options.keySet().removeIf(k -> k.equalsIgnoreCase(key));
    }
    options.putAll(tableOptions);
    if (replaceWhere != null) {
      options.put("replaceWhere", replaceWhere);
      options.put("timeZone", SQLConf.get().sessionLocalTimeZone());
      // The job that will rewrite the straddling parts when the write runs (PrestagedWrite).
      options.put("replaceStaged", Client.call("replace_job", Client.object()).asText());
    }
    LogicalWriteInfo merged = new WriteInfo(info, new CaseInsensitiveStringMap(options));
    PythonDataSourceV2 source = new PythonDataSourceV2();
    source.setShortName(Scans.SHORT_NAME);
    WriteBuilder builder = new PythonTable(source, Scans.SHORT_NAME, tableSchema).newWriteBuilder(merged);
    if (truncate) {
      // Spark's Python write knows only truncation: the writer replaces the rows matching
      // replaceWhere, when given, instead of all of them.
      builder = ((SupportsTruncate) builder).truncate();
    }
    Write write = builder.build();
    if (replaceWhere != null) {
      write = new PrestagedWrite(write, options, info.schema());
    }
    return clustered(write, merged.options());
  }

  /** The conf that turns clustered writes off (tsfile_catalog/sql/write_distribution.py). */
  static final String CLUSTERED_WRITES = "spark.tsfile.write.clustered";

  /**
   * {@code write} asking Spark to cluster rows by the table's TAG columns (the writer sorts
   * each task's rows); unchanged when the conf is off, the table has no TAG column, or the
   * write's {@code onDuplicate=last} makes the input's own order the answer (a shuffle would lose it).
   */
  private Write clustered(Write write, CaseInsensitiveStringMap options) {
    String enabled = SQLConf.get().getConfString(CLUSTERED_WRITES, "true").trim();
    if (!"true".equalsIgnoreCase(enabled) && !"false".equalsIgnoreCase(enabled)) {
      throw new IllegalArgumentException(
          CLUSTERED_WRITES + " must be true or false, not '" + enabled + "'");
    }
    if ("false".equalsIgnoreCase(enabled)
        || "last".equalsIgnoreCase(options.getOrDefault("onDuplicate", "error").trim())) {
      return write;
    }
    List<String> tags = new ArrayList<>();
    for (String tag : options.getOrDefault("tagColumns", "").split(",")) {
      String field = field(tag.trim());
      if (field != null) {
        tags.add(field);
      }
    }
    String time = field("time");
    if (tags.isEmpty() || time == null) {
      return write;
    }
    return new ClusteredWrite(write, tags);
  }

  /** The table's own spelling of column {@code name}, or null. */
  private String field(String name) {
    for (String field : tableSchema.fieldNames()) {
      if (field.equalsIgnoreCase(name)) {
        return field;
      }
    }
    return null;
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
